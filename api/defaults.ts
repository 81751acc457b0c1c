/** Where the API listens unless told otherwise; apart from the server so the CLI can show them cheaply. */
export const DEFAULT_API_HOST = '127.0.0.1';
export const DEFAULT_API_PORT = 8700;
