from bee_cli.main import main

main()
