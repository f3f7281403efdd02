import sys

from dmf_watch.simulator.command import main

sys.exit(main())
