"""The live socket of a session page: the consumer, its routes and frame protocol, the turns
it hosts (they belong to the session, not the socket), the streaming of a reply as coalesced
frames, the keep-warm loop and the follower that keeps every open tab's panels in step.

It draws with the pages' fragments and renderers (`chat.web`) and listens on the groups and
path the pages name (`chat.web.broadcast`); the pages never import it.
"""
