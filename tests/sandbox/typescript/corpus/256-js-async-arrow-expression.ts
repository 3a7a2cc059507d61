async () => (await codemode.weather_current({ city: 'Reykjavik' })).tempC > 10 ? 'warm enough' : 'bring a jacket'
