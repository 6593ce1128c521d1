import sys

from agents_demo.story import main

sys.exit(main())
