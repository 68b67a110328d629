// Not an `Auth`: the server must refuse to start with it, naming this file.
export const auth = { authenticate() {} };
