"""Test support: loopback servers (the batch API, S3, Chroma, PostgreSQL), made-up documents,
metric means and a project copy driven by the real git and dvc CLIs, shared by the tests, the
benchmarks and CI (.ci/run starts its PostgreSQL and Chroma servers from here).

It lives beside the tests, in a source checkout only, and never ships in the wheel. The stand-in
for the Anthropic and OpenAI APIs, which the docs' readers start too, is in the package:
goldenset.llm_stand_in. `s3_server` needs the test extra (moto), imported when a server starts.
"""
