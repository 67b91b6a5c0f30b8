#!/usr/bin/env bash
# The tutorials and the troubleshooting page as headless Chromium draws them from the built site:
#   bash docs/screenshots/take.sh     (needs chromium, and mkdocs from docs/requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 mkdocs build --strict -q --site-dir "$site"
python3 -m http.server 8731 --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
server=$!
trap 'kill $server; rm -rf "$site"' EXIT
sleep 1
for page in tutorials/claude tutorials/gate tutorials/chunkings tutorials/your-retriever troubleshooting; do
    chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400 \
        --screenshot="docs/screenshots/${page//\//-}.png" "http://127.0.0.1:8731/$page/" 2>/dev/null
done
# 64 colours: a fifth of the bytes, the text as sharp (where Pillow is installed)
python3 - <<'PY' || true
from pathlib import Path

from PIL import Image

for path in Path("docs/screenshots").glob("*.png"):
    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)
PY
