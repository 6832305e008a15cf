import sys

from creval.cli import main

if __name__ == "__main__":      # not when a spawned worker process re-imports this module (creval grade's rules)
    sys.exit(main())
