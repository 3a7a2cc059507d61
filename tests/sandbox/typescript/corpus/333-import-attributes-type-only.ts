import type Settings from './settings.json' with { type: 'json' };
import type { Schema } from './schema.json' with { type: 'json' };

const current: Partial<typeof Settings> = await codemode.settings_get({ scope: 'app' });
const schema: Schema | null = null;
return { keys: Object.keys(current), schema };
