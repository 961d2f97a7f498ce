"""Acts that reach the home: MQTT and Home Assistant, allowlisted like every other act.

    templates      topic, payload and entity-id templates: checked at config load,
                   rendered from checked slot values (JSON built, never concatenated)
    devices        `[[devices]]` -> the generated device acts and their resolution
    mqtt           publish (and wait for a device's state) with paho-mqtt
    homeassistant  Home Assistant's REST API with the standard library
    run            what the act handler calls for a non-argv act: one reply sentence

This package's __init__ imports nothing: mavend.config imports the templates
module while it is itself being loaded.
"""
