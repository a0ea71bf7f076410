"""The turn's preparation: the session's sets into the engine (`sets`), then the request
assembled once, with its notices and the breakdown the HUD reads (`prepare`)."""
