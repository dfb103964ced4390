"""Understanding: from a chat message to an intent, parameters and the words to answer with."""
