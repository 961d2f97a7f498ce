"""`mavend web token`: the link that logs a browser in to the household's page."""

from __future__ import annotations

import argparse

from mavend.cli.common import command, settings_from


def register(commands: argparse._SubParsersAction) -> None:
    web = command(commands, "web", "the household's page ([web] in the config)")
    sub = web.add_subparsers(dest="web_command", metavar="ACTION", required=True)
    token = sub.add_parser(
        "token",
        help="print the page's address with its login token (made on first use)",
        description="Print the page's address. When [web] listens beyond this box, the "
        "address carries the login token: open it once in each browser.",
    )
    token.set_defaults(func=cmd_token)


def cmd_token(args: argparse.Namespace) -> int:
    from mavend.web import login_token, page_url, token_path

    settings = settings_from(args)
    url = page_url(settings, login_token(settings))
    print(url)
    if not settings.web.enabled:
        print("([web] enabled is false: the daemon does not serve the page yet)")
    elif settings.web.loopback_only:
        print("(loopback only: no token needed on this box)")
    else:
        print(f"(the token is in {token_path(settings)}; delete that file to log everyone out)")
    return 0
