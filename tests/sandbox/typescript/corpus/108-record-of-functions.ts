async () => {
  type Command = 'status' | 'restart' | 'logs';
  type Handler = (service: string) => Promise<string>;

  const handlers: { [C in Command]: Handler } = {
    status: async (s) => (await codemode.systemd_status({ unit: s })).active_state,
    restart: async (s) => {
      await codemode.systemd_restart({ unit: s });
      return 'restarted';
    },
    logs: async (s): Promise<string> => (await codemode.journal_tail({ unit: s, lines: 20 })).join('\n'),
  };

  const request: { command: Command; service: string } = await codemode.queue_next({ queue: 'ops-requests' });
  const run: Handler | undefined = handlers[request.command];
  return run ? run(request.service) : `unknown command ${request.command}`;
}
