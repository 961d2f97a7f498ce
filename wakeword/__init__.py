"""The audio front end: microphone -> wake word -> endpointing -> speech-to-text.

Not built yet in this release: `mavend run` says so and `mavend listen` does not
exist. See the README's roadmap.
"""
