from interpreter.cli import main

main()
