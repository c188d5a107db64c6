BsumJc{=wÉÑ?%/D¿B˜T¿
³b?æî½¿