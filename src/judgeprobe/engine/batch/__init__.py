"""Provider batch APIs: export pending requests as OpenAI Batch JSONL, import the answers."""
