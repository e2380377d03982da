"""The agent: one LangChain graph over the advisor's tools, with an offline brain or an LLM.

`conversation` is the Python API (`Assistant`, `Session`, `Turn`), `graph` the agent graph and
its middleware, `policy` the offline brain, `toolbox` and `tool_args` the LangChain tools and
their argument schemas, `events` what a turn emits, and `evidence` what an answer may cite.
"""
