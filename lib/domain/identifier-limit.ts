/** The longest sign-in identifier accepted: the longest an email address can be (RFC 5321). */
export const MAX_IDENTIFIER_LENGTH = 254;
