"""Queue names: the only place they are spelled.

Separate queues give each pool its own concurrency so a slow pool never starves another.
"""

from typing import Final

CONSENSUS: Final = "consensus"
SIGNING: Final = "signing"
ACCOUNTS: Final = "accounts"
NOTIFICATIONS: Final = "notifications"

ALL: Final = (CONSENSUS, SIGNING, ACCOUNTS, NOTIFICATIONS)
