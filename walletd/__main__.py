import sys

from walletd.cli import main

sys.exit(main())
