"""Terminal charts: series bucketing, the line canvas, block bars and heat maps, and the views that compose them."""
