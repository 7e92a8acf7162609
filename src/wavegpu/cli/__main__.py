"""`python -m wavegpu.cli`: the `wave` command."""

from .wave import main

main()
