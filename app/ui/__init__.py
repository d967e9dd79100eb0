"""The Gradio web app. Callbacks stay thin: each calls one use case in app.services."""
