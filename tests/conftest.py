import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Tests never read or write the user's result cache (some patch the runner; a cached hit would bypass it).
os.environ.setdefault("TF_MIGRATE_CACHE_DIR", "off")
