from mavend.cli import main

raise SystemExit(main())
