from dra_migrate.entry import main

main()
