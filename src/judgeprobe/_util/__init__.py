"""Small helpers that import nothing of judgeprobe but its errors: hashing, atomic writes, the
codec, YAML files, annotations, redaction."""
