"""Everything the web app draws and serves, as pure functions and models (no UI library here).

`panel` is the job panel beside the chat, `views` its tables, `charts` the memory chart, `form`
the job form, `launch_spec` the SkyPilot task, `session` one browser tab's state, `uploads`
config.json uploads, `feedback` thumbs ratings, `ui_strings` the interface strings in six
languages, and `public_api` the functions published as API endpoints and MCP tools.
"""
