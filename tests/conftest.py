from pathlib import Path

import pytest

#: The shared real data sets live beside the checkout; a user's machine does not have them.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (they sit beside the checkout "
                    "in the project's workspace only)")
    return SHARED_DATA
