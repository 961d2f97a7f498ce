"""Acts that reach the home: MQTT and Home Assistant, allowlisted like every other act.

    templates      topic, payload and entity-id templates: checked at config load,
                   rendered from checked slot values (JSON built, never concatenated)
    classes        what each device type can do and how it is said (pure tables)
    devices        which devices a request means (the acts `[[devices]]` generates are
                   mavend/config/devices.py's: they are made while the config is read)
    mqtt           publish (and wait for a device's state) with paho-mqtt
    homeassistant  Home Assistant's REST API with the standard library
    run            what the act handler calls for a non-argv act: one reply sentence

This package's __init__ imports nothing: mavend.config imports templates and classes
(which import nothing of mavend) while it is itself being loaded.
"""
