import type Ajv from 'ajv';
import type { ValidateFunction, ErrorObject } from 'ajv';
import type { default as Yaml } from 'yaml';

type Validator = ValidateFunction<{ name: string }>;
let ajv: Ajv | undefined;
let yaml: typeof Yaml | undefined;
const errors: ErrorObject[] = [];
const validate: Validator | undefined = undefined;
const doc = await codemode.fs_read_file({ path: 'service.yaml' });
return { length: doc.length, haveAjv: ajv !== undefined, haveYaml: yaml !== undefined, errors: errors.length, validate };
