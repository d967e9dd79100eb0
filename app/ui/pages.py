"""The two pages outside the studio: sign in and sign up. Plain HTML forms, readable on a phone."""

from __future__ import annotations

from html import escape

STYLE = """
body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; }
main { max-width: 420px; margin: 8vh auto; background: #fff; padding: 28px 24px;
       border-radius: 12px; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
h1 { margin: 0 0 4px; font-size: 1.6rem; } p.lead { color: #555; margin: 0 0 20px; }
label { display: block; margin: 14px 0 4px; font-weight: 600; }
input { width: 100%; box-sizing: border-box; padding: 10px; font-size: 1rem;
        border: 1px solid #c8ccd2; border-radius: 8px; }
button { margin-top: 20px; width: 100%; padding: 12px; font-size: 1rem; font-weight: 600;
         background: #1f3a5f; color: #fff; border: 0; border-radius: 8px; cursor: pointer; }
.error { background: #fdecea; color: #8a1f11; padding: 10px; border-radius: 8px; }
.switch { margin-top: 16px; text-align: center; }
"""


def sign_in(error: str = "", email: str = "") -> str:
    return _page(
        "Sign in",
        "Make and personalize your TV spot.",
        error,
        "/login",
        [("email", "Email", "email", email), ("password", "Password", "password", "")],
        "Sign in",
        'New here? <a href="/signup">Create an account for your business</a>',
    )


def sign_up(error: str = "", business: str = "", email: str = "") -> str:
    return _page(
        "Create your account",
        "One account per business; only you see its campaigns and files.",
        error,
        "/signup",
        [
            ("business", "Business name", "text", business),
            ("email", "Email", "email", email),
            ("password", "Password (at least 10 characters)", "password", ""),
        ],
        "Create account",
        'Have an account? <a href="/login">Sign in</a>',
    )


def _page(title, lead, error, action, fields, submit, switch) -> str:
    inputs = "".join(
        f'<label for="{name}">{escape(label)}</label>'
        f'<input id="{name}" name="{name}" type="{kind}" value="{escape(value)}" required>'
        for name, label, kind, value in fields
    )
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · Spotforge</title><style>{STYLE}</style></head>
<body><main><h1>Spotforge</h1><p class="lead">{escape(lead)}</p>{alert}
<form method="post" action="{action}">{inputs}<button type="submit">{escape(submit)}</button></form>
<p class="switch">{switch}</p></main></body></html>"""
