"""The earcons: wake.wav and done.wav, made by mavend.tts.earcons.make_chime (CC0 / MIT)."""
