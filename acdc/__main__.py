import sys

from acdc.cli import main

sys.exit(main())
