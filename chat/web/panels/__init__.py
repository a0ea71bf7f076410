"""Keeping every open tab's panels in step with its session, whoever changed it."""
