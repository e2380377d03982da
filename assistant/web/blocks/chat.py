"""The chat column: the conversation (with the first screen's intro and examples), the message
box, send and 'new conversation'; and the wiring of a turn, of an example picked, of a new
conversation (the button and the chat's own clear icon do the same)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from assistant.agent.conversation import MAX_MESSAGE_CHARS
from assistant.web.blocks.common import t
from assistant.web.blocks.handlers import App
from assistant.web.blocks.outputs import APPLY_UPDATES_JS, PageUpdates

__all__ = ["ChatParts", "chat_column", "wire_chat"]

# Empties the message box once a message goes out; a message the server will refuse (blank or
# over the limit) stays, so nothing typed is lost.
CLEAR_SENT_JS = f"(text) => (text.trim() && text.length <= {MAX_MESSAGE_CHARS} ? '' : text)"


@dataclass(frozen=True)
class ChatParts:
    chatbot: Any
    textbox: Any
    send: Any
    new_chat: Any


def chat_column() -> ChatParts:
    """The chatbot, the message box with send, and 'new conversation'."""
    chatbot = gr.Chatbot(
        label=t("chat"),
        show_label=False,
        elem_id="chat",
        height=600,
        buttons=["copy"],
        feedback_options=("Like", "Dislike"),
        placeholder=t("chat_intro"),
        layout="bubble",
    )
    with gr.Row(equal_height=True, elem_id="composer"):
        textbox = gr.Textbox(
            label=t("chat"),
            placeholder=t("chat_placeholder"),
            show_label=False,
            scale=6,
            lines=1,
            max_lines=6,
            elem_id="chat-input",
            submit_btn=False,
            autofocus=False,
        )
        send = gr.Button(t("send"), variant="primary", scale=1, elem_id="send", min_width=88)
    new_chat = gr.Button(t("new_chat"), variant="secondary", elem_id="new-chat", size="md")
    return ChatParts(chatbot, textbox, send, new_chat)


def wire_chat(
    app: App,
    web_state: gr.State,
    browser: gr.BrowserState,
    chat: ChatParts,
    answer_lang: Any,
    job_outputs: list[Any],
    after_turn: list[Any],
    server_side: list[Any],
) -> None:
    """A turn updates the chat, the form, the panel and what the browser keeps, in one event;
    an example is sent as if typed; a new conversation clears everything, the saved record
    included. The `chat` endpoint (API clients, `deploy.probe`) is the turn alone: no trigger
    on the page, the chat and the session only. `job_outputs` are the session, chat, form and
    panel; `after_turn` the form and panel, which the turn sends as one payload that the
    browser applies, but for its `server_side` components (see `outputs.PageUpdates`)."""
    chatbot, textbox = chat.chatbot, chat.textbox
    inputs = [textbox, answer_lang, web_state]
    app.page_updates = updates = PageUpdates(after_turn, server_side)
    payload = gr.Textbox(visible=False, elem_id="page-updates")
    outputs = [chatbot, web_state, payload, *updates.server_blocks, browser]
    page_turn = app.page_respond if app.streams else app.page_answer  # see App.streams
    # the progress animation on the chat alone: the panel shows the last job until the new one
    shown: dict[str, Any] = {"concurrency_id": "turn", "show_progress_on": [chatbot]}
    applied: dict[str, Any] = {"js": APPLY_UPDATES_JS, "queue": False, "show_progress": "hidden"}
    triggers = [textbox.submit, chat.send.click]
    turn = gr.on(triggers, page_turn, inputs, outputs, api_visibility="private", **shown)
    turn.success(None, [payload], updates.browser_blocks, **applied)
    gr.on(triggers, None, [textbox], [textbox], js=CLEAR_SENT_JS, queue=False)
    gr.on(
        [],
        app.respond if app.streams else app.answer,
        inputs,
        [chatbot, web_state],
        api_name="chat",
        concurrency_id="turn",
        api_visibility="undocumented",  # callable (see README); not an MCP tool: it has state
    )

    def example(selected: gr.SelectData) -> str:
        value = selected.value
        return str(value.get("text", "")) if isinstance(value, dict) else str(value or "")

    picked = chatbot.example_select(example, None, textbox, api_visibility="private")
    sent = picked.then(page_turn, inputs, outputs, api_visibility="private", **shown)
    sent.success(None, [payload], updates.browser_blocks, **applied)
    sent.then(lambda: "", None, textbox, api_visibility="private")
    chatbot.like(app.feedback, [web_state], None, api_visibility="private")
    gr.on(
        [chat.new_chat.click, chatbot.clear],
        app.reset,
        [web_state],
        [*job_outputs, browser],
        api_visibility="private",
    )
