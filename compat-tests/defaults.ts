/** PostgreSQL for the pgqueue backend when DATABASE_URL is unset. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
