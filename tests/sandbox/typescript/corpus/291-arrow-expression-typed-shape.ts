async (): Promise<number> => (await codemode.queue_depth({ queue: 'emails' })) as number
