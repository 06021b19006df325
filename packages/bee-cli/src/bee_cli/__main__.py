"""`python -m bee_cli`: the `bee` command."""

from bee_cli.main import main

main()
