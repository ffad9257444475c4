"""``python -m judgeprobe``: the command line, as the ``judgeprobe`` script runs it."""

from judgeprobe._cli.main import main

if __name__ == "__main__":
    main()
