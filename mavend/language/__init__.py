"""Reading spoken English: number words (`numbers`) and time expressions (`timeparse`,
which also reads Russian time words); which language a request is in (`script`);
whether a request asks for a timer, an alarm or a reminder (`reminder_kinds`).

Pure functions over text, importing nothing else of mavend, so every room that reads what
people say (the router, offline answers, handlers, repeating reminders, conversation)
stands on them.
"""
