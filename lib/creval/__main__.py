import sys

from creval.cli import main

sys.exit(main())
