(await codemode.github_get_repo({ owner: 'acme', repo: 'api' }) as { default_branch: string }).default_branch
