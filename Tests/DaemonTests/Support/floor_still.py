#!/usr/bin/python3
"""Watches the floor view in headless Chromium for an asset that stands (issue 63) and prints
what it saw as one JSON object.

Usage: floor_still.py URL READY_FILE ASSET
Waits for the asset's line in the side list to say it stands: an `asset.position` with
`moving: false` arrived on the stream.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import watch_live_page

url, ready, asset = sys.argv[1:4]
watch_live_page(url, ready, asset, "li.dataset.moving === 'false'", "the asset standing", lambda driver, wait: {})
