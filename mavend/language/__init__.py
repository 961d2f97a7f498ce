"""Reading spoken English: number words (`numbers`) and time expressions (`timeparse`).

Pure functions over text, importing nothing else of mavend, so every room that reads what
people say (the router, offline answers, handlers, repeating reminders, conversation)
stands on them.
"""
