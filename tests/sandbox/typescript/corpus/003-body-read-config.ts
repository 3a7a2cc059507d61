const raw: string = await codemode.fs_read_file({ path: 'config.json' });
const config = JSON.parse(raw) as { port: number; host: string; debug?: boolean };
if (!config.port) {
  return { error: 'no port configured' };
}
return `${config.host}:${config.port}${config.debug ? ' (debug)' : ''}`;
