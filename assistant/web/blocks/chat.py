"""The chat column: the conversation, the message box, the answer language, examples; and the
wiring of a turn, of a page load (the saved conversation restored) and of a new conversation."""

from __future__ import annotations

from typing import Any

import gradio as gr

from assistant.agent.conversation import MAX_MESSAGE_CHARS
from assistant.languages import language_from_header
from assistant.web.blocks.common import language_choices, t
from assistant.web.blocks.handlers import App
from assistant.web.panel import compute_panel
from assistant.web.session import WebSession
from assistant.web.ui_strings import example_prompts

__all__ = ["chat_column", "wire_chat"]


def chat_column(app: App, web_state: gr.State) -> tuple[Any, ...]:
    """The chatbot, the message box, send, the answer language and 'new conversation'."""
    chatbot = gr.Chatbot(
        label=t("chat"), show_label=False, elem_id="chat", height=640, buttons=["copy"],
        feedback_options=("Like", "Dislike"), placeholder="**GPU Advisor**",
    )  # fmt: skip
    with gr.Row(equal_height=True):
        textbox = gr.Textbox(
            label="message", placeholder=t("chat_placeholder"), show_label=False, scale=6,
            lines=1, max_lines=6,
            max_length=MAX_MESSAGE_CHARS + 1, elem_id="chat-input", submit_btn=False,
        )  # fmt: skip
        send = gr.Button(t("send"), variant="primary", scale=1, elem_id="send", min_width=90)
    with gr.Row():
        language = gr.Dropdown(
            language_choices(), value="auto", label=t("answer_language"), elem_id="language"
        )
        new_chat = gr.Button(t("new_chat"), variant="secondary", elem_id="new-chat")
    prompts = example_prompts()
    gr.Examples(
        examples=[[prompt] for _, prompt in prompts], inputs=[textbox], label=t("examples"),
        example_labels=[f"{code.upper()} · {prompt}" for code, prompt in prompts],
        examples_per_page=12,
    )  # fmt: skip
    chatbot.like(app.feedback, [web_state], None, api_visibility="private")
    return chatbot, textbox, send, language, new_chat


def wire_chat(
    app: App, demo: gr.Blocks, web_state: gr.State, browser: gr.BrowserState,
    chat: tuple[Any, ...], after_turn: list[Any], tabs: list[list[Any]],
) -> None:  # fmt: skip
    """A turn updates the chat, then the form and panel, then what the browser keeps; a load
    restores the saved conversation; 'new conversation' starts afresh."""
    chatbot, textbox, send, language, new_chat = chat
    turn = gr.on(
        [textbox.submit, send.click], app.respond, [textbox, language, web_state],
        [chatbot, web_state], api_name="chat", concurrency_id="turn",
        api_visibility="undocumented",  # callable (see README); not an MCP tool: it has state
    )  # fmt: skip
    gr.on([textbox.submit, send.click], None, None, textbox, js="() => ''", queue=False)
    turn.then(
        lambda web: (*app.form_outputs(web), *app.panel_outputs(web)),
        [web_state],
        after_turn,
        api_visibility="private",
    ).then(lambda web: web.to_browser(), [web_state], [browser], api_visibility="private")

    def restore(raw: Any, request: gr.Request) -> tuple[Any, ...]:
        web = WebSession.from_browser(
            raw, language_from_header(request.headers.get("accept-language"))
        )
        if web.session.state.model is not None:
            web.panel = compute_panel(web.session.state, app.catalog())
        return (web, web.chat, *app.form_outputs(web), *app.panel_outputs(web))

    def reset(web: WebSession | None) -> tuple[Any, ...]:
        fresh = WebSession(ui_lang=web.ui_lang if web else "en")
        return (fresh, [], *app.form_outputs(fresh), *app.panel_outputs(fresh), None)

    load = demo.load(
        restore, [browser], [web_state, chatbot, *after_turn], api_visibility="private"
    )
    for fill, inputs, outputs in tabs:  # the catalog and estimator tabs, in the page's language
        load = load.then(fill, inputs, outputs, api_visibility="private")
    new_chat.click(reset, [web_state], [web_state, chatbot, *after_turn, browser],
                   api_visibility="private")  # fmt: skip
