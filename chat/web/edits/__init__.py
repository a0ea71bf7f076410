"""The page's review of the model's edits: `cards` draws a reply's diff cards from its
pending-edit rows; `views` takes Accept, Reject, Undo and the Auto-apply switch and sends
the cards drawn again to every tab of the session."""
