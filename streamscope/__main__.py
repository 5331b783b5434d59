from streamscope.cli import main

main()
