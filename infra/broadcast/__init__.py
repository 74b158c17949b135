"""Sending transactions: chain RPC, the nonce manager, Ethereum and Solana sends, the tracker."""
