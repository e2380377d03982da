import sys

from benchmarks.chat_heldout.run import main

sys.exit(main())
